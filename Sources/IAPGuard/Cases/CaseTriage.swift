import Foundation

/// An analyst's triage: sets a case's state with who, when and a note, and appends it to the history.
public struct CaseTriage {
    public let connection: any SQLExecutor

    public init(connection: any SQLExecutor) {
        self.connection = connection
    }

    /// Sets the state of `caseID` (a merged case is followed to the case that absorbed it). The history
    /// gets one entry even when the state does not change (a note on its own is worth keeping).
    @discardableResult
    public func setStatus(_ caseID: String, to status: CaseStatus, by name: String, note: String?, at: Int64) throws
        -> IncidentCase
    {
        let trimmedName = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmedName.isEmpty, trimmedName.count <= 200 else {
            throw CaseError.invalid("--by: a name of 1 to 200 characters is needed")
        }
        guard trimmedName != CaseStage.jobName else {
            throw CaseError.invalid("--by: '\(CaseStage.jobName)' is reserved for the job's own changes")
        }
        if let note, note.count > 4000 { throw CaseError.invalid("--note: at most 4000 characters") }
        let reader = CaseReader(connection: connection)
        return try connection.transaction {
            var current = try reader.find(caseID)
            let from = current.status
            _ = try connection.run(
                """
                UPDATE case_state SET status = ?, status_by = ?, status_at = ?, status_note = ? WHERE case_id = ?
                """, [.text(status.rawValue), .text(trimmedName), .integer(at), .of(note), .text(current.caseID)])
            try CaseStage.appendEvent(
                [
                    .text(current.caseID), .integer(at), .null, .text(trimmedName), .text(from.rawValue),
                    .text(status.rawValue), .of(note),
                ], connection)
            current.status = status
            current.statusBy = trimmedName
            current.statusAt = at
            current.statusNote = note
            return current
        }
    }
}
