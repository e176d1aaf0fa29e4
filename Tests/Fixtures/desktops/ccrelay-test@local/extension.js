/* Test sessions only (scripts/desktops/session): lets org.gnome.Shell.Eval
 * answer, by turning on unsafe mode. main.js skips its "System was put in
 * unsafe mode" banner while Looking Glass is open, so it looks open for the
 * synchronous notify::unsafe-mode handler; else that banner would take the
 * banner slot ahead of ccrelay's bubble. */
const Main = imports.ui.main;

function init() {}

function enable() {
    const lookingGlass = Main.lookingGlass;
    Main.lookingGlass = { isOpen: true };
    global.context.unsafe_mode = true;
    Main.lookingGlass = lookingGlass;
}

function disable() {}
