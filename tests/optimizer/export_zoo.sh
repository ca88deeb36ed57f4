#!/bin/sh
# ctest fixture: exports the zoo models the optimizer tests use into DIR
# unless they are there already.  usage: export_zoo.sh SOURCE_DIR DIR
set -e
src=$1; dir=$2; models=resnet18,mobilenet_v2,googlenet
missing=
for m in $(echo $models | tr , ' '); do
  [ -f "$dir/$m.onnx" ] && [ -f "$dir/$m.input.pb" ] || missing=1
done
[ -z "$missing" ] && exit 0
mkdir -p "$dir"
exec /usr/bin/python3 "$src/models/zoo/export.py" "$dir" --models $models
