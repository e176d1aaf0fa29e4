#!/usr/bin/env python3
"""kde-menu.py X Y: right-clicks the tray icon at X,Y, waits for the menu that
Plasma opens (a QMenu: a new plasmashell window, which AT-SPI does not list) and
reads it with tesseract. Prints one JSON object: the window and each line of text
with its centre on screen."""
import json
import re
import subprocess
import sys
import time


def sh(*command):
    return subprocess.run(command, capture_output=True, text=True).stdout


def windows():
    return set(sh("xdotool", "search", "--onlyvisible", "--class", "plasmashell").split())


x, y = sys.argv[1], sys.argv[2]
before = windows()
sh("xdotool", "mousemove", x, y, "click", "3")
new = []
for _ in range(50):
    new = sorted(windows() - before)
    if new:
        break
    time.sleep(0.2)
if not new:
    print(json.dumps({"window": None, "lines": []}))
    sys.exit(0)
window = new[0]
time.sleep(0.5)  # the menu's fade-in
geometry = dict(re.findall(r"(X|Y|WIDTH|HEIGHT)=(\d+)", sh("xdotool", "getwindowgeometry", "--shell", window)))
subprocess.run(["import", "-window", window, "/tmp/desktop/menu.png"], check=True)
subprocess.run(["convert", "/tmp/desktop/menu.png", "-resize", "300%", "/tmp/desktop/menu3.png"], check=True)
words = [row.split("\t") for row in sh("tesseract", "/tmp/desktop/menu3.png", "-", "tsv").splitlines()[1:]]
lines = {}
for word in words:
    if len(word) == 12 and word[11].strip():
        key = (word[2], word[3], word[4])  # block, paragraph, line
        left, top, width, height = (int(value) for value in word[6:10])
        entry = lines.setdefault(key, {"words": [], "left": left, "top": top, "right": left + width, "bottom": top + height})
        entry["words"].append(word[11])
        entry["left"], entry["top"] = min(entry["left"], left), min(entry["top"], top)
        entry["right"], entry["bottom"] = max(entry["right"], left + width), max(entry["bottom"], top + height)
result = [{"text": " ".join(line["words"]),
           "x": int(geometry["X"]) + (line["left"] + line["right"]) // 6,
           "y": int(geometry["Y"]) + (line["top"] + line["bottom"]) // 6} for line in lines.values()]
result.sort(key=lambda line: line["y"])
print(json.dumps({"window": window, "lines": result}, ensure_ascii=False))
