/// The version of ccrelay: `--version`, the user agent, `GetStatus`.
public let ccrelayVersion = "0.3.0"
