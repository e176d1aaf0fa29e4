import Foundation
import Testing

/// The documentation's shelves hold together (issue 35): docs/architecture.md's
/// module map names every target of Package.swift and nothing else, and no
/// Markdown link, nor a `docs/…` path named in the code, scripts or man pages,
/// points at a file that does not exist or outside the repository.
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: root + "/" + path, encoding: .utf8)
    }

    /// The repository's files below `folder` (relative paths), without .build, .git and other hidden folders.
    static func files(under folder: String = "", endingIn suffixes: [String]) -> [String] {
        let base = folder.isEmpty ? root : root + "/" + folder
        guard let walk = FileManager.default.enumerator(atPath: base) else { return [] }
        var found: [String] = []
        while let path = walk.nextObject() as? String {
            let name = (path as NSString).lastPathComponent
            if name.hasPrefix(".") || name == "node_modules" {
                walk.skipDescendants()
                continue
            }
            if suffixes.contains(where: { name.hasSuffix($0) }) { found.append(folder.isEmpty ? path : folder + "/" + path) }
        }
        return found.sorted()
    }

    static func matches(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    /// The targets Package.swift declares, the fuzz targets of `make fuzz` included.
    static func packageTargets() throws -> Set<String> {
        let manifest = try read("Package.swift")
        let declared = matches(#"\.(?:target|executableTarget|testTarget|systemLibrary)\(\s*name: "([^"]+)""#, in: manifest)
        let fuzz = matches(#"\("(fuzz-[a-z-]+)","#, in: manifest)
        return Set(declared + fuzz)
    }

    /// The names in the first column of docs/architecture.md's module map.
    static func mappedModules() throws -> [String] {
        let page = try read("docs/architecture.md")
        let start = try #require(page.range(of: "\n## Module map\n"))
        let section = page[start.upperBound...].components(separatedBy: "\n## ").first ?? ""
        return section.split(separator: "\n").filter { $0.hasPrefix("| `") }.flatMap { row in
            matches("`([^`]+)`", in: String(row.split(separator: "|").first ?? ""))
        }
    }

    @Test func theModuleMapNamesEveryTargetAndOnlyTargets() throws {
        let targets = try Self.packageTargets()
        let mapped = try Self.mappedModules()
        #expect(targets.count > 20, "\(targets)")
        #expect(targets.subtracting(mapped).isEmpty, "targets missing from docs/architecture.md's module map: \(targets.subtracting(mapped).sorted())")
        #expect(Set(mapped).subtracting(targets).isEmpty, "the map names what Package.swift lacks: \(Set(mapped).subtracting(targets).sorted())")
        #expect(mapped.count == Set(mapped).count, "a module mapped twice: \(mapped)")
    }

    @Test func noOtherFileClaimsToBeTheModuleMap() throws {
        for path in Self.files(endingIn: [".md"]) where path != "docs/architecture.md" {
            #expect(!(try Self.read(path)).contains("## Module map"), "\(path)")
            #expect(!(try Self.read(path)).contains("## Layout"), "\(path)")
        }
    }

    /// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { character -> Character? in
            if character == " " { return "-" }
            return character.isLetter || character.isNumber || character == "-" || character == "_" ? character : nil
        })
    }

    static func anchors(of markdown: String) -> Set<String> {
        var inCode = false
        var found: Set<String> = []
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            found.insert(anchor(line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)))
        }
        return found
    }

    /// Where a relative reference from `file` lands, or nil when it leaves the repository.
    static func resolve(_ reference: String, from file: String) -> String? {
        var parts = file.split(separator: "/").dropLast().map(String.init)
        for part in reference.split(separator: "/").map(String.init) {
            if part == ".." {
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
            } else if part != "." {
                parts.append(part)
            }
        }
        return parts.joined(separator: "/")
    }

    @Test func everyRelativeLinkInTheMarkdownLandsOnAFileAndHeading() throws {
        let pages = Self.files(endingIn: [".md"])
        #expect(pages.contains("README.md") && pages.contains("docs/architecture.md"))
        for page in pages {
            let text = try Self.read(page)
            for link in Self.matches(#"\]\(([^)\s]+)\)"#, in: text) {
                if link.contains("://") || link.hasPrefix("mailto:") { continue }
                let pieces = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let target = pieces[0].isEmpty ? page : Self.resolve(pieces[0], from: page)
                let resolved = try #require(target, "\(page): \(link) points outside the repository")
                var isFolder: ObjCBool = false
                #expect(FileManager.default.fileExists(atPath: Self.root + "/" + resolved, isDirectory: &isFolder), "\(page): \(link) does not exist")
                if pieces.count == 2, resolved.hasSuffix(".md"), let linked = try? Self.read(resolved) {
                    #expect(Self.anchors(of: linked).contains(pieces[1]), "\(page): \(link) names no heading of \(resolved)")
                }
            }
        }
    }

    @Test func everyDocsPathNamedInTheCodeScriptsAndManPagesExists() throws {
        var named = 0
        let sources = ["Sources", "Tests", "scripts", "packaging", "bench"].flatMap {
            Self.files(under: $0, endingIn: [".swift", ".1", ".5", ".8", ".in", ".example", ".sh", ".py", ".c"])
        } + ["Makefile", ".ci/run"] + ["scripts", "packaging"].flatMap { Self.files(under: $0, endingIn: [""]) }.filter { !$0.contains(".") }
        for file in Set(sources) {
            guard let text = try? Self.read(file) else { continue }
            for path in Self.matches(#"(?<![A-Za-z0-9_./-])(docs/[A-Za-z0-9_.\-/]*[A-Za-z0-9_])"#, in: text) {
                named += 1
                #expect(FileManager.default.fileExists(atPath: Self.root + "/" + path), "\(file) names \(path), which does not exist")
            }
        }
        #expect(named > 10)
    }
}
