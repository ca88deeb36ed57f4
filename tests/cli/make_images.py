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
