-- alerts.db as ccrelay 0.1.0 (9ff607a) wrote it: schema 2, its migration steps 1 and 2 verbatim
-- (Sources/Relay/AlertStore.swift there), in WAL mode. scripts/install-check upgrades from it.
PRAGMA journal_mode = WAL;
CREATE TABLE IF NOT EXISTS notices_seen (id TEXT PRIMARY KEY, shown_at REAL NOT NULL);
PRAGMA application_id = 1667461753;
CREATE TABLE alerts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, title TEXT NOT NULL,
    body TEXT NOT NULL, urgency INTEGER NOT NULL, posted_at REAL NOT NULL,
    notification_id INTEGER, acknowledged INTEGER NOT NULL DEFAULT 0, acknowledged_at REAL);
CREATE INDEX alerts_unread ON alerts (acknowledged, kind);
CREATE TABLE session (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1), server TEXT NOT NULL,
    account TEXT NOT NULL, token TEXT NOT NULL, ip TEXT NOT NULL, interval INTEGER NOT NULL,
    timeout INTEGER NOT NULL, seq INTEGER NOT NULL, deadline REAL NOT NULL);
PRAGMA user_version = 2;
