import CCRelayCore
import CoreVocabulary

/// A usage error: the message, and the exit status 2 it leads to.
struct UsageError: Error {
    var message: String
}

/// The command line of one subcommand, parsed.
struct ParsedArguments {
    var flags: Set<String> = []
    var values: [String: String] = [:]
    var positionals: [String] = []

    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

/// Parses GNU-style arguments: `--name`, `--name=value`, `--name value`,
/// `-h`, and `--` to end options. Only the options named are accepted; an
/// unknown one is a usage error with the nearest known name suggested.
func parseArguments(_ arguments: [String], flags: [String], valued: [String]) throws(UsageError) -> ParsedArguments {
    var parsed = ParsedArguments()
    var index = 0
    var optionsEnded = false
    let known = (flags + valued + ["help"]).map { "--" + $0 }
    while index < arguments.count {
        let argument = arguments[index]
        index += 1
        if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
            parsed.positionals.append(argument)
            continue
        }
        if argument == "--" {
            optionsEnded = true
            continue
        }
        if argument == "-h" {
            parsed.flags.insert("help")
            continue
        }
        guard argument.hasPrefix("--") else {
            throw UsageError(message: fill(localize("unknown option '%s'"), argument))
        }
        let body = argument.dropFirst(2)
        let name = String(body.prefix { $0 != "=" })
        let inlineValue = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
        if flags.contains(name) || name == "help" {
            if inlineValue != nil { throw UsageError(message: fill(localize("option '--%s' takes no value"), name)) }
            parsed.flags.insert(name)
        } else if valued.contains(name) {
            if let inlineValue {
                parsed.values[name] = inlineValue
            } else if index < arguments.count {
                parsed.values[name] = arguments[index]
                index += 1
            } else {
                throw UsageError(message: fill(localize("option '--%s' needs a value"), name))
            }
        } else {
            throw UsageError(message: suggesting(fill(localize("unknown option '%s'"), "--" + name), for: "--" + name, among: known))
        }
    }
    return parsed
}

/// The candidate closest to `word` by edit distance, when it is close enough to be a typo.
func nearestMatch(to word: String, among candidates: [String]) -> String? {
    let scored = candidates.map { ($0, editDistance(word, $0)) }.min { $0.1 < $1.1 }
    guard let (candidate, distance) = scored, distance <= max(2, word.count / 3) else { return nil }
    return candidate
}

/// `message`, with "did you mean …?" when `word` is a near miss of a candidate.
func suggesting(_ message: String, for word: String?, among candidates: [String]) -> String {
    guard let word, let nearest = nearestMatch(to: word, among: candidates) else { return message }
    return message + fill(localize("; did you mean '%s'?"), nearest)
}

/// Ends a subcommand early with this exit status (after `--help`, or a usage error).
struct SubcommandExit: Error {
    var status: Int32
}

/// Parses a subcommand's arguments with the options its table entry names.
/// Prints the usage and ends with 0 on `--help`; prints the error with a
/// hint and ends with 2 on a usage error.
func parseSubcommand(_ command: Subcommand, _ arguments: [String]) throws(SubcommandExit) -> ParsedArguments {
    let parsed: ParsedArguments
    do {
        parsed = try parseArguments(arguments, flags: command.flags, valued: command.valued)
    } catch {
        Output.error("\(command.name): \(error.message)\n" + fill(localize("Try 'ccrelay %s --help'."), command.name))
        throw SubcommandExit(status: ExitStatus.usage)
    }
    if parsed.has("help") {
        Output.out(command.usage + "\n\n" + CLI.manualPointer)
        throw SubcommandExit(status: ExitStatus.ok)
    }
    return parsed
}

/// A usage error found by a subcommand after parsing: printed with the hint, status 2.
func usageError(_ command: String, _ message: String) -> Int32 {
    Output.error("\(command): \(message)\n" + fill(localize("Try 'ccrelay %s --help'."), command))
    return ExitStatus.usage
}

/// The usage error of an argument a subcommand does not take.
func unexpectedArgument(_ command: String, _ argument: String) -> Int32 {
    usageError(command, fill(localize("unexpected argument '%s'"), argument))
}
