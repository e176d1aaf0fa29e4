/// Why location access was refused (`location-denied`).
public enum LocationDenial: Sendable, Hashable, CaseIterable {
    /// The user (through the desktop's location agent or the portal) said no.
    case byUser
    /// GeoClue's configuration (`/etc/geoclue/geoclue.conf`) does not allow the application.
    case byConfiguration
    /// No location agent runs for this user to ask.
    case noAgent
}

/// Why there is no location service (`location-off`).
public enum LocationOff: Sendable, Hashable, CaseIterable {
    /// Location is switched off for this user (Settings → Privacy, or the portal's NotAllowed).
    case disabled
    /// No location service is installed or running.
    case unavailable
}

/// Why the location given is not good enough (`location-too-coarse`).
public enum LocationTooCoarse: Sendable, Hashable, CaseIterable {
    /// Only an approximate location is allowed for the application.
    case approximate
    /// The location service stopped (its client turned inactive) while the campus requires a fix.
    case stopped
}
