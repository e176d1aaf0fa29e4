import DesktopServices
import CCRelayCore
import CoreVocabulary

/// A message in the user's language (gettext; `make pot` extracts what this is called with).
func localize(_ messageID: String) -> String { Localization.localize(messageID) }

/// `template` with each `%s` replaced by the next of `values`, as the alerts fill theirs.
func fill(_ template: String, _ values: String...) -> String { TextTemplate.fill(template, values) }
