import AlertJournal

/// The file that remembers a fresh install's one offer to set up (beside
/// the journal): the autostart entry starts the daemon without a
/// configuration only until the offer was made, and the daemon makes it once.
public enum SetupOffer {
    /// `$XDG_STATE_HOME/ccrelay/setup-offered`.
    public static var markerPath: String {
        String(AlertStore.defaultPath().dropLast("alerts.db".count)) + "setup-offered"
    }
}
