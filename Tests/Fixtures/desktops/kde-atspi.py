#!/usr/bin/env python3
"""Every showing, named accessible of plasmashell through AT-SPI, one JSON object a
line: role, name (or its text), description, and its box on screen. Run a fresh
process for each look: a long-lived client without a main loop keeps the list of
applications it saw first."""
import json
import pyatspi


def walk(node, depth=0):
    if node is None or depth > 40:
        return
    try:
        name = node.name
        if not name:
            try:
                text = node.queryText()
                name = text.getText(0, text.characterCount)
            except Exception:
                pass
        if name and node.getState().contains(pyatspi.STATE_SHOWING):
            try:
                box = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
                box = [box.x, box.y, box.width, box.height]
            except Exception:
                box = None
            print(json.dumps({"role": node.getRoleName(), "name": name, "description": node.description or "", "box": box},
                             ensure_ascii=False))
        for index in range(node.childCount):
            walk(node.getChildAtIndex(index), depth + 1)
    except Exception:
        pass


desktop = pyatspi.Registry.getDesktop(0)
for index in range(desktop.childCount):
    app = desktop.getChildAtIndex(index)
    if app is not None and app.name == "plasmashell":
        walk(app)
