import Testing

@testable import IAPGuard

/// A rule query's result kept as value arrays under one column list reads back as the per-row dictionaries
/// the engine used to build.
@Suite struct ResultRowsTests {
    @Test func rowsReadBackByColumnNameAsAppended() {
        var rows = ResultRows()
        rows.append(columns: ["transaction_id", "amount"], values: [.text("t1"), .integer(990)])
        rows.append(columns: ["transaction_id", "amount"], values: [.text("t2"), .null])
        #expect(rows.count == 2)
        #expect(rows.columns == ["transaction_id", "amount"])
        #expect(rows.dictionary(at: 0) == ["transaction_id": .text("t1"), "amount": .integer(990)])
        #expect(rows.dictionary(at: 1)["amount"] == .null)
    }

    @Test func aColumnNamedTwiceKeepsItsLastValueLikeTheDictionaryItReplaced() {
        var rows = ResultRows()
        rows.append(columns: ["user_id", "user_id"], values: [.text("first"), .text("last")])
        #expect(rows.dictionary(at: 0) == ["user_id": .text("last")])
    }

    @Test func aTakenRowIsReleasedAndTheOthersStay() {
        var rows = ResultRows()
        rows.append(columns: ["k"], values: [.text("a")])
        rows.append(columns: ["k"], values: [.text("b")])
        #expect(rows.take(at: 0) == ["k": .text("a")])
        #expect(rows.values[0].isEmpty)
        #expect(rows.dictionary(at: 1) == ["k": .text("b")])
    }

    @Test func anEmptyResultHasNoColumns() {
        let rows = ResultRows()
        #expect(rows.isEmpty)
        #expect(rows.columns.isEmpty)
    }
}
