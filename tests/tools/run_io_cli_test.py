#!/usr/bin/env python3
"""`sable run` with files in and out: run_io_cli_test.py SABLE MAKE_RUN_MODELS.

The models (make_run_models.cc) take the channel of highest value of each pixel of an RGB image
(ARG_MAX), so the class map of the test image is known by construction: the left half is reddish
(class 0), the top right greenish (class 1), the bottom right bluish (class 2). The .npy/.npz
files are read back with NumPy, the PNG is decoded here with zlib. Exit 77 (skipped) without NumPy.
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    import numpy as np
except ImportError:
    print("SKIP: NumPy is absent (scripts/setup-deps.sh installs python3-numpy)")
    sys.exit(77)

SABLE, MAKE_MODELS = sys.argv[1], sys.argv[2]
RED, GREEN, BLUE = (250, 10, 60), (20, 240, 100), (90, 30, 230)
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def run(*args):
    p = subprocess.run([SABLE, "run", *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def image_rgb(size):
    """size x size pixels: x < size/2 red, else y < size/2 green, else blue."""
    img = np.zeros((size, size, 3), dtype=np.uint8)
    h = size // 2
    img[:, :h] = RED
    img[:h, h:] = GREEN
    img[h:, h:] = BLUE
    return img


def write_bmp(path, img):
    h, w, _ = img.shape
    row = (w * 3 + 3) // 4 * 4
    data = b""
    for y in range(h - 1, -1, -1):  # bottom-up, BGR
        line = img[y, :, ::-1].tobytes()
        data += line + b"\0" * (row - len(line))
    header = struct.pack("<2sIHHI", b"BM", 54 + len(data), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    with open(path, "wb") as f:
        f.write(header + info + data)


def read_png(path):
    """RGB 8-bit PNG -> (height, width, 3) array; filters undone as the PNG spec says."""
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(raw):
        length, kind = struct.unpack(">I4s", raw[pos:pos + 8])
        body = raw[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour == 2, "not 8-bit RGB"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    data = zlib.decompress(idat)
    stride = width * 3
    out = np.zeros((height, stride), dtype=np.int32)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        ftype = data[y * (stride + 1)]
        line = np.frombuffer(data, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int32)
        cur = np.zeros(stride, dtype=np.int32)
        for i in range(stride):
            a = cur[i - 3] if i >= 3 else 0
            b = prev[i]
            c = prev[i - 3] if i >= 3 else 0
            if ftype == 0:
                pred = 0
            elif ftype == 1:
                pred = a
            elif ftype == 2:
                pred = b
            elif ftype == 3:
                pred = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[i] = (line[i] + pred) & 0xFF
        out[y] = cur
        prev = cur
    return out.reshape(height, width, 3)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def checksum_of(out):
    for line in out.splitlines():
        if line.startswith("checksum:"):
            return int(line.split()[-1], 16)
    return None


with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([MAKE_MODELS, tmp], check=True)
    nhwc, nchw, flt = (os.path.join(tmp, f"seg_{k}.tflite") for k in ("nhwc", "nchw", "float"))
    bmp = os.path.join(tmp, "image.bmp")
    write_bmp(bmp, image_rgb(16))
    labels = os.path.join(tmp, "labels.txt")
    with open(labels, "w") as f:
        f.write("red\ngreen\nblue\n")
    # The class map of the 8x8 model input, by construction; ARG_MIN's for the second output.
    expected = np.zeros((1, 8, 8), dtype=np.int32)
    expected[0, :4, 4:] = 1
    expected[0, 4:, 4:] = 2
    expected_min = np.ones((1, 8, 8), dtype=np.int32)
    expected_min[0, :4, 4:] = 0

    # --image, --output .npz, --annotate, the histogram with label names.
    npz, png = os.path.join(tmp, "out.npz"), os.path.join(tmp, "annotated.png")
    rc, out = run(nhwc, "--image", bmp, "--labels", labels, "--output", npz, "--annotate", png)
    print(out)
    check(rc == 0, f"segmentation run exits 0 (got {rc})")
    check("segmentation: 8x8 pixels, 3 classes present" in out, "segmentation summary line")
    check(any(l.split() == ["class", "0", "32", "pixels", "50.0%", "red"] for l in out.splitlines()),
          "histogram: class 0, 32 pixels, red")
    check(any(l.split() == ["class", "2", "16", "pixels", "25.0%", "blue"] for l in out.splitlines()),
          "histogram: class 2, 16 pixels, blue")
    z = np.load(npz)
    check(z.files == ["output0", "output1"], f"npz members in the model's order ({z.files})")
    check(z["output0"].dtype == np.int32 and z["output0"].shape == (1, 8, 8), "output0 is int32 [1,8,8]")
    check(np.array_equal(z["output0"], expected), "output0 is the class map by construction")
    check(np.array_equal(z["output1"], expected_min), "output1 (ARG_MIN) is the minimum channel by construction")
    check(fnv1a64(z["output0"].tobytes()) == checksum_of(out), "output0 bytes are the run's (its checksum)")
    img = read_png(png)
    check(img.shape == (16, 16, 3), f"PNG is the input image's size ({img.shape})")
    # Half and half with the class colour (VOC palette: 0 black, 1 (128,0,0), 2 (0,128,0)), rounding up.
    check(tuple(img[3, 2]) == (125, 5, 30), f"overlay at a class-0 pixel {tuple(img[3, 2])}")
    check(tuple(img[2, 12]) == (74, 120, 50), f"overlay at a class-1 pixel {tuple(img[2, 12])}")
    check(tuple(img[13, 13]) == (45, 79, 115), f"overlay at a class-2 pixel {tuple(img[13, 13])}")

    # NCHW and float inputs from the same image give the same class map.
    npy = os.path.join(tmp, "out.npy")
    for model, what in ((nchw, "NCHW uint8"), (flt, "NHWC float32")):
        rc, out = run(model, "--image", bmp, "--output", npy)
        check(rc == 0 and np.array_equal(np.load(npy), expected), f"--image into the {what} input: {rc}\n{out}")

    # --input: .npy and raw bytes of the 8x8 image.
    small = image_rgb(8)[None]
    inp_npy, inp_raw = os.path.join(tmp, "in.npy"), os.path.join(tmp, "in.bin")
    np.save(inp_npy, small)
    small.tofile(inp_raw)
    rc, out = run(nhwc, "--input", inp_npy, "--output", npz)
    check(rc == 0 and np.array_equal(np.load(npz)["output0"], expected), f"--input .npy: {rc}")
    rc, out = run(nhwc, "--input", inp_raw, "--output", npz)
    check(rc == 0 and np.array_equal(np.load(npz)["output0"], expected), f"--input raw bytes: {rc}")
    np.save(inp_npy, small[0])  # the batch of 1 may be left out
    rc, out = run(nhwc, "--input", inp_npy)
    check(rc == 0, f"--input .npy without the batch dimension: {rc}")
    rc, out = run("--input", inp_raw, nhwc)  # one file per --input: the model after it stays the model
    check(rc == 0 and "segmentation:" in out, f"--input FILE before the model's path: {rc}")
    rc, out = run(nhwc, "--task", "classify", "--input", inp_raw)
    check(rc == 0 and "top-5:" in out, "--task classify prints the top-5")

    # --save-input writes the tensor as fed: from --image it reads back through --input to the same
    # outputs (same checksum); the synthetic input too.
    saved = os.path.join(tmp, "saved.npy")
    rc, out = run(nhwc, "--image", bmp, "--save-input", saved)
    check(rc == 0 and "input:    saved to " + saved in out, f"--image --save-input: {rc}\n{out}")
    s = np.load(saved)
    check(s.dtype == np.uint8 and s.shape == (1, 8, 8, 3), f"saved input is uint8 [1,8,8,3] ({s.dtype} {s.shape})")
    rc2, out2 = run(nhwc, "--input", saved)
    check(rc2 == 0 and checksum_of(out2) == checksum_of(out), "the saved input gives the image run's outputs")
    rc, out = run(nhwc, "--seed", "7", "--save-input", saved)
    rc2, out2 = run(nhwc, "--input", saved)
    check(rc == 0 and rc2 == 0 and checksum_of(out2) == checksum_of(out), "the saved synthetic input reads back")

    # Pose: a RESHAPE model whose output is the keypoints fed by --input (drawing them is
    # run_io_test's: --annotate draws on the --image that is a model's input).
    pose = os.path.join(tmp, "pose.tflite")
    kp = np.zeros((1, 17, 3), dtype=np.float32)
    kp[0, 5] = (0.25, 0.125, 0.9)  # left shoulder
    kp[0, 6] = (0.25, 0.875, 0.8)  # right shoulder
    np.save(os.path.join(tmp, "kp.npy"), kp)
    rc, out = run(pose, "--input", os.path.join(tmp, "kp.npy"))
    check(rc == 0 and "keypoints: 17" in out, f"pose model shown as keypoints: {rc}")
    check(any(l.split() == ["left_shoulder", "y", "0.250", "x", "0.125", "score", "0.9000"] for l in out.splitlines()),
          "left_shoulder line with its y, x, score")

    # Detection: the imported TFLite_Detection_PostProcess (tflite_test_model.h; its detections
    # worked out by hand in TfliteImport.DetectionPostProcessDetectsWhatNmsKeeps) shown as boxes.
    detect = os.path.join(tmp, "detect.tflite")
    np.save(os.path.join(tmp, "enc.npy"),
            np.array([[[0, 0, 0, 0], [1, 0, 0, 0], [0, -2, 0, 0], [0, 0, -3.5, 0]]], dtype=np.float32))
    np.save(os.path.join(tmp, "pred.npy"),
            np.array([[[0.1, 0.9, 0.2], [0.1, 0.8, 0.35], [0.0, 0.1, 0.7], [0.9, 0.05, 0.02]]], dtype=np.float32))
    rc, out = run(detect, "--input", os.path.join(tmp, "enc.npy"), "--input", os.path.join(tmp, "pred.npy"))
    check(rc == 0 and "detections: 2" in out, f"detection model shown as detections: {rc}")
    check(any(l.split() == ["2.", "class", "1", "score", "0.7000", "box", "[0.500,", "0.400,", "1.000,", "0.900]"]
              for l in out.splitlines()), "the second detection with its class, score and box")
    # Two inputs: --save-input .npz holds both, as given.
    saved_npz = os.path.join(tmp, "saved.npz")
    rc, out = run(detect, "--input", os.path.join(tmp, "enc.npy"), "--input", os.path.join(tmp, "pred.npy"),
                  "--save-input", saved_npz)
    z = np.load(saved_npz)
    check(rc == 0 and z.files == ["input0", "input1"], f"--save-input .npz of two inputs: {rc} {z.files}")
    check(np.array_equal(z["input0"], np.load(os.path.join(tmp, "enc.npy"))) and
          np.array_equal(z["input1"], np.load(os.path.join(tmp, "pred.npy"))), "the saved inputs are the given ones")
    rc, out = run(detect, "--input", os.path.join(tmp, "enc.npy"), "--input", os.path.join(tmp, "pred.npy"),
                  "--save-input", saved)
    check(rc == 2 and "--save-input: the model has 2 inputs: write them as a .npz" in out,
          f"--save-input .npy of two inputs: exit 2 (got {rc})\n    {out.strip()}")

    # Bad input: each a clear message and exit status 2.
    def bad_npy(name, data):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    good = open(inp_npy, "rb").read()
    np.save(os.path.join(tmp, "f32.npy"), small.astype(np.float32))
    np.save(os.path.join(tmp, "shape.npy"), np.zeros((1, 8, 4, 3), dtype=np.uint8))
    fortran = os.path.join(tmp, "fortran2.npy")
    with open(fortran, "wb") as f:  # a Fortran-ordered array as NumPy writes it
        np.lib.format.write_array(f, np.asfortranarray(np.zeros((8, 8, 3), dtype=np.uint8)), version=(2, 0))
    cases = [
        (["--input", os.path.join(tmp, "missing.npy")], "no such input file"),
        (["--input", bad_npy("short.bin", b"\1" * 10)], "has 10 bytes, but input 0 (TENSOR_QUANT8_ASYMM [1, 8, 8, 3]) takes 192 bytes"),
        (["--input", os.path.join(tmp, "f32.npy")], "dtype '<f4', but input 0 is TENSOR_QUANT8_ASYMM"),
        (["--input", os.path.join(tmp, "shape.npy")], "shape (1, 8, 4, 3), but input 0 has shape [1, 8, 8, 3]"),
        (["--input", fortran], "Fortran order"),
        (["--input", bad_npy("trunc.npy", good[:-5])], "(truncated)"),
        (["--input", bad_npy("trunchdr.npy", good[:40])], "truncated .npy header"),
        (["--input", bad_npy("hdr.npy", good[:10] + b"[" + good[11:])], "not a dict"),
        (["--input", bad_npy("nomagic.npy", b"hello world, not numpy")], "is not a .npy file"),
        (["--input", inp_raw, "--input", inp_raw], "2 files for the model's 1 inputs"),
        (["--input", inp_raw, "--output", "/nonexistent-dir/out.npz"], "no folder '/nonexistent-dir'"),
        (["--input", inp_raw, "--output", npy], "the model has 2 outputs: write them as a .npz"),
        (["--input", inp_raw, "--output", os.path.join(tmp, "out.txt")], "must end in .npy (one output) or .npz"),
        (["--input", inp_raw, "--save-input", os.path.join(tmp, "in.txt")], "must end in .npy (one input) or .npz"),
        (["--input", inp_raw, "--save-input", "/nonexistent-dir/in.npy"], "no folder '/nonexistent-dir'"),
        (["--input", inp_raw, "--annotate", png], "--annotate draws on the input image: it needs --image"),
        (["--image", bmp, "--annotate", "/nonexistent-dir/a.png"], "no folder '/nonexistent-dir'"),
        (["--image", bmp, "--task", "classify", "--annotate", png], "a classifier's output has nothing to draw"),
        (["--input", inp_raw, "--task", "detect"], "--task detect reads the four outputs"),
        (["--input", inp_raw, "--image", bmp], "--image and --input both give the inputs"),
    ]
    for args, message in cases:
        rc, out = run(nhwc, *args)
        check(rc == 2 and message in out, f"{' '.join(args)}: exit 2 (got {rc}) and '{message}'\n    {out.strip()}")

if failures:
    print(f"FAILED: {len(failures)}")
    sys.exit(1)
print("PASS")
