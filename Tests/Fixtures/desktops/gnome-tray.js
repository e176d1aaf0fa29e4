// The AppIndicator extension's tray icons in the top bar: each one's title, accessible
// name, the icon file the shell drew, where it is on screen, and its menu (open or not,
// each item's label, whether it can be clicked, and its centre on screen).
(() => {
    const centre = actor => {
        const [x, y] = actor.get_transformed_position();
        const [w, h] = actor.get_transformed_size();
        return { x: Math.round(x + w / 2), y: Math.round(y + h / 2) };
    };
    const iconFile = icon => {
        let gicon = icon ? icon.gicon : null;
        if (gicon && gicon.get_icon) gicon = gicon.get_icon();
        if (gicon && gicon.get_file) return gicon.get_file().get_path();
        return gicon ? gicon.to_string() : null;
    };
    return Object.entries(Main.panel.statusArea).filter(([key]) => key.startsWith('appindicator-')).map(([key, item]) => ({
        key, title: item._indicator.title, accessibleName: item.get_accessible_name(), icon: iconFile(item._icon),
        visible: item.is_mapped(), ...centre(item), menuOpen: item.menu.isOpen,
        items: item.menu._getMenuItems().filter(i => i.label).map(i => ({
            label: i.label.text, sensitive: i.reactive, mapped: i.is_mapped(), ...centre(i),
        })),
    }));
})()
