/// A wall-clock instant as the local hour and minute (`HH:MM`), for the
/// digest's lines — from the offset the shell read with it, so that it is pure.
enum LocalClock {
    static func hourMinute(_ seconds: Double, utcOffset: Int) -> String {
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "?" }
        let minutes = Int(((seconds + Double(utcOffset)) / 60).rounded(.down))
        let ofDay = ((minutes % 1440) + 1440) % 1440
        let text = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return text(ofDay / 60) + ":" + text(ofDay % 60)
    }
}
