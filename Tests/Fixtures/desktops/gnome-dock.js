// Dash to Dock's app icons: each app's desktop id and its count badge (Dash to Dock's
// `notification-badge` label): the text and whether it is shown.
(() => {
    const icons = [];
    const walk = actor => {
        if (actor.app && actor.app.get_id && !icons.some(i => i.actor === actor)) icons.push({ actor });
        actor.get_children().forEach(walk);
    };
    walk(Main.layoutManager.uiGroup);
    const badges = [];
    const findBadges = actor => {
        if (actor instanceof imports.gi.St.Label && actor.has_style_class_name('notification-badge')) badges.push(actor);
        actor.get_children().forEach(findBadges);
    };
    return icons.map(({ actor }) => {
        badges.length = 0;
        findBadges(actor);
        return {
            app: actor.app.get_id(), mapped: actor.is_mapped(),
            badges: badges.map(b => ({ text: b.text, shown: b.is_mapped() && b.get_parent().visible && b.visible })),
        };
    });
})()
