#!/usr/bin/env python3
"""Test images for image_classifier_test.sh, written into argv[1].

tiny-{a,b,c}.png  2x2 grayscale inputs for the hand-written test bundle
rgb.png           an 8x8 RGB image (wrong channel count for digits)
corrupt.png       the first half of a real fashion PNG
fake.png          text with a .png name
<fashion>.jpg     a fashion test image re-encoded as a quality-100 JPEG
"""
import os
import sys

from PIL import Image

out = sys.argv[1]
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
tiny = {"a": [200, 10, 0, 0], "b": [0, 255, 100, 90], "c": [50, 250, 255, 0]}
for name, px in tiny.items():
    img = Image.new("L", (2, 2))
    img.putdata(px)
    img.save(os.path.join(out, f"tiny-{name}.png"))
Image.new("RGB", (8, 8), (10, 200, 30)).save(os.path.join(out, "rgb.png"))
fashion = os.path.join(src, "models", "fashion", "images", "9-ankle-boot-0.png")
with open(fashion, "rb") as f:
    data = f.read()
with open(os.path.join(out, "corrupt.png"), "wb") as f:
    f.write(data[:len(data) // 2])
with open(os.path.join(out, "fake.png"), "w") as f:
    f.write("not an image\n")
Image.open(fashion).save(os.path.join(out, "boot.jpg"), quality=100)

# Variants of the digits model that check layout and channel order end to
# end: the same network behind a Transpose from NHWC, or behind a 1x1 Conv
# that passes channel 0 of a 3-channel input through (weights 1, 0, 0).
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def wrap_digits(path, new_input, node, inits):
    m = onnx.load(os.path.join(src, "models", "digits", "digits.onnx"))
    g = m.graph
    old = [i for i in g.input if i.name == "input"][0]
    g.input.remove(old)
    g.input.insert(0, new_input)
    g.node.insert(0, node)
    g.initializer.extend(inits)
    onnx.checker.check_model(m)
    onnx.save(m, path)


wrap_digits(os.path.join(out, "digits_nhwc.onnx"),
            helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 8, 8, 1]),
            helper.make_node("Transpose", ["image"], ["input"], perm=[0, 3, 1, 2]),
            [])
wrap_digits(os.path.join(out, "digits_rgb.onnx"),
            helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 8, 8]),
            helper.make_node("Conv", ["image", "pick"], ["input"], kernel_shape=[1, 1]),
            [numpy_helper.from_array(np.array([1, 0, 0], np.float32).reshape(1, 3, 1, 1), "pick")])
digit = np.asarray(Image.open(os.path.join(src, "models", "digits", "images", "digit-3.png")))
noise = np.random.default_rng(0).integers(0, 256, (2, 8, 8), dtype=np.uint8)
Image.fromarray(np.stack([digit, noise[0], noise[1]], -1), "RGB").save(os.path.join(out, "digit3-red.png"))
Image.fromarray(np.stack([noise[0], noise[1], digit], -1), "RGB").save(os.path.join(out, "digit3-blue.png"))

# digits with symbolic spatial dims: needs -onnx-define-symbol=H,8 and W,8.
m = onnx.load(os.path.join(src, "models", "digits", "digits.onnx"))
dims = [i for i in m.graph.input if i.name == "input"][0].type.tensor_type.shape.dim
dims[2].dim_param = "H"
dims[3].dim_param = "W"
onnx.save(m, os.path.join(out, "digits_hw.onnx"))
