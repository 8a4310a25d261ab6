/// Schema migration 12: cases — the analyst's queue (one incident, one case), its findings and its triage
/// history.
///
/// - `case_state`: one row per case: the triage state (`open`, `investigating`, `confirmed-fraud`,
///   `false-positive`, `resolved`) with who set it, when and a note, and what the latest run computed
///   (level, money at risk, rules, anchor, accounts, first and last seen). A case absorbed by another when a
///   new finding linked them keeps its row with `merged_into` set.
/// - `case_finding`: which case each finding belongs to (a finding stays with its case after it resolves,
///   so it rejoins the same case if it comes back).
/// - `case_event`: the append-only history of every state change, by an analyst (`cases set-status`) or by
///   the job (`iapguard`: opened, re-opened because a new finding joined, resolved because every finding
///   resolved, merged). Rows are only ever inserted.
///
/// Views `cases`, `case_findings` and `case_history` are the documented read side (`docs/reports.md`).
/// Plain SQL that SQLite and PostgreSQL both run (`SQLDialect.ddl` maps the integer types).
enum CaseSchema {
    static let migration = Schema.Migration(version: 12, name: "cases and triage state", sql: sql)

    static let sql = """
        CREATE TABLE case_state (
            case_id TEXT PRIMARY KEY,
            anchor_key TEXT NOT NULL,
            status TEXT NOT NULL,
            status_by TEXT NOT NULL,
            status_at INTEGER NOT NULL,
            status_note TEXT,
            level TEXT NOT NULL,
            money_at_risk INTEGER NOT NULL,
            rules TEXT NOT NULL,
            active_findings INTEGER NOT NULL,
            anchor_transaction_id TEXT,
            gaining_user_id TEXT,
            losing_user_id TEXT,
            summary TEXT NOT NULL,
            first_seen_run_id INTEGER NOT NULL,
            last_seen_run_id INTEGER NOT NULL,
            first_seen_at INTEGER,
            last_seen_at INTEGER,
            created_run_id INTEGER NOT NULL,
            last_joined_run_id INTEGER NOT NULL,
            last_run_id INTEGER NOT NULL,
            merged_into TEXT
        );
        CREATE INDEX case_state_status ON case_state (status, level);
        CREATE TABLE case_finding (
            finding_id TEXT PRIMARY KEY,
            case_id TEXT NOT NULL,
            joined_run_id INTEGER NOT NULL,
            active INTEGER NOT NULL
        );
        CREATE INDEX case_finding_case ON case_finding (case_id);
        CREATE TABLE case_event (
            event_id INTEGER PRIMARY KEY,
            case_id TEXT NOT NULL,
            at INTEGER NOT NULL,
            run_id INTEGER,
            by_name TEXT NOT NULL,
            from_status TEXT,
            to_status TEXT NOT NULL,
            note TEXT
        );
        CREATE INDEX case_event_case ON case_event (case_id, event_id);

        CREATE VIEW cases AS
            SELECT case_id, anchor_key, status, status_by, status_at, status_note, level, money_at_risk, rules,
                   active_findings, anchor_transaction_id, gaining_user_id, losing_user_id, summary,
                   first_seen_run_id, last_seen_run_id, first_seen_at, last_seen_at, created_run_id,
                   last_joined_run_id, last_run_id, merged_into
            FROM case_state;
        CREATE VIEW case_findings AS
            SELECT finding_id, case_id, joined_run_id, active FROM case_finding;
        CREATE VIEW case_history AS
            SELECT event_id, case_id, at, run_id, by_name, from_status, to_status, note FROM case_event;
        """
}
