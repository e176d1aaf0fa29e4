import Foundation

/// An X display of a test's own (Xvfb), so that what it shows is not
/// covered by other tests' windows and bubbles; screenshots of it.
public final class PrivateDisplay: Sendable {
    private let server: ChildProcess
    /// `:N`, for DISPLAY.
    public let name: String

    public init(width: Int = 640, height: Int = 200) throws {
        server = try ChildProcess("/usr/bin/Xvfb", ["-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp"])
        guard let line = server.readLine(), let number = Int(line.trimmingCharacters(in: .whitespaces)) else {
            throw TestSetupError("Xvfb did not start")
        }
        name = ":\(number)"
    }

    /// The whole screen as RGB pixels (xwd, then netpbm's xwdtopnm, 8 bits a sample), saved as a PNG at `png` too.
    public func screenshot(savingTo png: String) throws -> Screenshot {
        try Screenshot(display: name, savingTo: png)
    }

    deinit { server.stop() }
}

extension Screenshot {
    /// The whole screen of the X display `display` (`:N`) as RGB pixels (xwd, then
    /// netpbm's xwdtopnm, 8 bits a sample), saved as a PNG at `png` too.
    public init(display: String, savingTo png: String) throws {
        let ppm = FileManager.default.temporaryDirectory.appendingPathComponent("shot-\(UUID().uuidString).ppm").path
        defer { try? FileManager.default.removeItem(atPath: ppm) }
        let shot = try run("/bin/sh", ["-c", "xwd -root -silent -display \(display) | xwdtopnm 2>/dev/null | pnmdepth 255 > \(ppm) && pnmtopng < \(ppm) > \(png)"])
        guard shot.status == 0 else { throw TestSetupError("screenshot failed: \(shot.standardError)") }
        try self.init(ppm: Data(contentsOf: URL(fileURLWithPath: ppm)))
    }
}

/// An RGB picture read from a binary PPM (P6, maxval 255).
public struct Screenshot: Sendable {
    public let width: Int
    public let height: Int
    public let pixels: [UInt8]

    init(ppm: Data) throws {
        // Header: "P6" width height maxval, separated by whitespace, then one whitespace byte.
        var fields: [String] = []
        var index = ppm.startIndex
        var current = ""
        while fields.count < 4, index < ppm.endIndex {
            let byte = ppm[index]
            index += 1
            if byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D {
                if !current.isEmpty { fields.append(current); current = "" }
            } else {
                current.append(Character(UnicodeScalar(byte)))
            }
        }
        guard fields.count == 4, fields[0] == "P6", let width = Int(fields[1]), let height = Int(fields[2]), fields[3] == "255",
            ppm.endIndex - index >= width * height * 3
        else { throw TestSetupError("not a P6 picture") }
        self.width = width
        self.height = height
        pixels = Array(ppm[index..<(index + width * height * 3)])
    }

    /// How many pixels of the rectangle (clipped to the picture) `matches` (red, green, blue, 0–255).
    public func count(x: Int, y: Int, width: Int, height: Int, where matches: (Int, Int, Int) -> Bool) -> Int {
        var found = 0
        for row in max(0, y)..<max(max(0, y), min(self.height, y + height)) {
            for column in max(0, x)..<max(max(0, x), min(self.width, x + width)) {
                let offset = (row * self.width + column) * 3
                if matches(Int(pixels[offset]), Int(pixels[offset + 1]), Int(pixels[offset + 2])) { found += 1 }
            }
        }
        return found
    }

    /// How many pixels are within `tolerance` of the colour (each channel).
    public func count(red: Int, green: Int, blue: Int, tolerance: Int = 12) -> Int {
        var found = 0
        var offset = 0
        while offset + 2 < pixels.count {
            if abs(Int(pixels[offset]) - red) <= tolerance && abs(Int(pixels[offset + 1]) - green) <= tolerance
                && abs(Int(pixels[offset + 2]) - blue) <= tolerance
            {
                found += 1
            }
            offset += 3
        }
        return found
    }
}
