// The message tray's notifications (title and body, as the banner shows them), by
// source, and the banner on screen now.
(() => {
    const tray = Main.messageTray;
    return {
        sources: tray.getSources().map(source => ({
            title: source.title,
            notifications: source.notifications.map(n => ({ title: n.title, body: n.bannerBodyText })),
        })),
        banner: tray._banner && tray._notification
            ? { title: tray._notification.title, body: tray._notification.bannerBodyText, mapped: tray._banner.is_mapped() }
            : null,
    };
})()
