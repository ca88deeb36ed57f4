"""Compiles the elementwise formulas of lib/Graph/Ops.py to C++.

A formula is a Python expression over the op's inputs (x, y, z: inputs 0, 1,
2), its attributes (by lower-case name) and number literals, with + - * /,
unary -, comparisons (< <= > >= ==), `a if c else b`, and the functions in
FUNCTIONS. opgen.py emits each formula twice from the one text: as kernel-IR
builder calls (the CPU and CUDA kernels) and as a double expression (the
Interpreter, the reference).
"""
import ast

# name -> (kernel-IR UnOp, C++ double function); log1p has no UnOp and is
# built as Log(1 + v) in kernels.
FUNCTIONS = {
    "exp": ("Exp", "std::exp"), "log": ("Log", "std::log"),
    "tanh": ("Tanh", "std::tanh"), "erf": ("Erf", "std::erf"),
    "abs": ("Abs", "std::fabs"), "sqrt": ("Sqrt", "std::sqrt"),
    "floor": ("Floor", "std::floor"), "ceil": ("Ceil", "std::ceil"),
    "sin": ("Sin", "std::sin"), "cos": ("Cos", "std::cos"),
    "sigmoid": ("Sigmoid", None), "log1p": (None, "std::log1p"),
}
BINARY = {ast.Add: ("Add", "+"), ast.Sub: ("Sub", "-"), ast.Mult: ("Mul", "*"),
          ast.Div: ("Div", "/")}
COMPARE = {ast.Lt: ("Lt", False), ast.LtE: ("Le", False),
           ast.Gt: ("Lt", True), ast.GtE: ("Le", True), ast.Eq: ("Eq", False)}
CPP_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
               ast.Eq: "=="}
INPUTS = ["x", "y", "z"]


class FormulaError(Exception):
    pass


def _attr_index(op, name):
    for i, (a, kind) in enumerate(op["attrs"]):
        if a.lower() == name:
            return i, "f" if kind == "float" else "i"
    raise FormulaError("%s: formula names unknown '%s'" % (op["name"], name))


def _name(op, n, kernel):
    if n.id in INPUTS[:len(op["inputs"])]:
        return "x[%d]" % INPUTS.index(n.id)
    i, field = _attr_index(op, n.id)
    v = "double(I.attr(%d).%s)" % (i, field)
    return "c(%s)" % v if kernel else v


def _call(op, n, kernel):
    known = set(FUNCTIONS) | {"min", "max", "pow"}
    if not isinstance(n.func, ast.Name) or n.func.id not in known:
        raise FormulaError("%s: unknown function in formula" % op["name"])
    f = n.func.id
    args = [_emit(op, a, kernel) for a in n.args]
    if f in ("min", "max", "pow"):
        if kernel:
            return "k.binary(BinOp::%s, %s, %s)" % (f.capitalize(), *args)
        return "std::%s(%s, %s)" % ("fmin" if f == "min" else
                                    "fmax" if f == "max" else "pow", *args)
    unop, cpp = FUNCTIONS[f]
    if kernel:
        if f == "log1p":
            return "k.unary(UnOp::Log, k.binary(BinOp::Add, c(1), %s))" % args[0]
        return "k.unary(UnOp::%s, %s)" % (unop, args[0])
    if f == "sigmoid":
        return "(1.0 / (1.0 + std::exp(-(%s))))" % args[0]
    return "%s(%s)" % (cpp, args[0])


def _emit(op, n, kernel):
    if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
        return "c(%r)" % float(n.value) if kernel else repr(float(n.value))
    if isinstance(n, ast.Name):
        return _name(op, n, kernel)
    if isinstance(n, ast.BinOp) and type(n.op) in BINARY:
        a, b = _emit(op, n.left, kernel), _emit(op, n.right, kernel)
        binop, sym = BINARY[type(n.op)]
        if kernel:
            return "k.binary(BinOp::%s, %s, %s)" % (binop, a, b)
        return "(%s %s %s)" % (a, sym, b)
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        a = _emit(op, n.operand, kernel)
        return "k.unary(UnOp::Neg, %s)" % a if kernel else "(-%s)" % a
    if isinstance(n, ast.Compare) and len(n.ops) == 1 and \
            type(n.ops[0]) in COMPARE:
        a = _emit(op, n.left, kernel)
        b = _emit(op, n.comparators[0], kernel)
        if not kernel:
            return "(%s %s %s)" % (a, CPP_COMPARE[type(n.ops[0])], b)
        binop, swap = COMPARE[type(n.ops[0])]
        return "k.binary(BinOp::%s, %s, %s)" % ((binop, b, a) if swap else
                                                (binop, a, b))
    if isinstance(n, ast.Call):
        return _call(op, n, kernel)
    if isinstance(n, ast.IfExp):
        c = _emit(op, n.test, kernel)
        t, f = _emit(op, n.body, kernel), _emit(op, n.orelse, kernel)
        return "k.select(%s, %s, %s)" % (c, t, f) if kernel else \
            "(%s ? %s : %s)" % (c, t, f)
    raise FormulaError("%s: unsupported syntax in formula" % op["name"])


def compile_formula(op, kernel):
    """C++ for \\p op's formula: a kernel-IR ExprRef expression (needs k, c
    and x in scope) or, without \\p kernel, a double expression (needs x and
    I)."""
    tree = ast.parse(op["formula"], mode="eval")
    return _emit(op, tree.body, kernel)
