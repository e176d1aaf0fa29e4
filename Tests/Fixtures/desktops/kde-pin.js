// Plasma desktop scripting (org.kde.PlasmaShell.evaluateScript): pins CC Relay's
// desktop entry as the task manager's one launcher (the task manager badges
// launchers and running tasks only).
panels().forEach(function (panel) {
    panel.widgets().forEach(function (widget) {
        if (widget.type == "org.kde.plasma.icontasks" || widget.type == "org.kde.plasma.taskmanager") {
            widget.currentConfigGroup = ["General"];
            widget.writeConfig("launchers", ["applications:io.github.ccrelay.CCRelay.desktop"]);
            widget.reloadConfig();
            print("pinned in " + widget.type);
        }
    });
});
