// gjs gnome-eval.js FILE.js: evaluates FILE.js in GNOME Shell (org.gnome.Shell.Eval,
// which answers in unsafe mode: the ccrelay-test@local extension) and prints its
// value as JSON; exits 1 when the shell reports an error.
const { Gio, GLib } = imports.gi;
const [, bytes] = GLib.file_get_contents(ARGV[0]);
const reply = Gio.DBus.session.call_sync('org.gnome.Shell', '/org/gnome/Shell', 'org.gnome.Shell', 'Eval',
    new GLib.Variant('(s)', [new TextDecoder().decode(bytes)]), null, Gio.DBusCallFlags.NONE, 20000, null);
const [ok, value] = reply.deepUnpack();
if (!ok) {
    printerr(value);
    imports.system.exit(1);
}
print(value);
