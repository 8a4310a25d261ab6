import Foundation

extension Pipeline {
    /// The FX rates of this run: `snapshot` (the `fx_rates` file) overlaid with rates fetched by earlier
    /// runs and by `fx:` now. Without `fx:` the snapshot is returned unchanged.
    func fetchFXRates(store: any PurchaseStore, snapshot: [ReferenceData.FXRate]) -> [ReferenceData.FXRate] {
        guard let fx = config.fxFetch else { return snapshot }
        var previous: [ReferenceData.FXRate] = []
        try? store.query(
            "SELECT currency, rate_date, per_eur, source FROM fx_rates WHERE source IN (:ecb, :extra)",
            parameters: ["ecb": .text(FXRateFetcher.ecbLabel), "extra": .text(FXRateFetcher.extraLabel)]
        ) { _, row in
            if let currency = row[0].textValue, let date = row[1].integerValue, let rate = row[2].doubleValue,
                let source = row[3].textValue
            {
                previous.append(.init(currency: currency, rateDate: date, perEUR: rate, source: source))
            }
        }
        let result = FXRateFetcher(config: fx, logger: logger).rates(snapshot: snapshot, previous: previous)
        logger.info(
            "FX rates",
            metadata: [
                "ecb": "\(result.fetchedECB)", "extra": "\(result.fetchedExtra)", "total": "\(result.rates.count)",
            ])
        return result.rates
    }

    /// Pulls the configured App Store Server API sources into the store and adds them to `summary` (one
    /// source row each; failed calls are run errors, work left for the next run is logged).
    /// The notification window follows the run's: `since` is the run's `--since` (nil without one), the end
    /// is the window's `until`.
    func pullAppStoreAPI(
        store: any PurchaseStore, runID: Int64, since: Int64?, summary: inout RunSummary,
        shouldStop: @escaping () -> Bool
    ) throws {
        guard !config.appStoreAPI.isEmpty, !summary.stopped else { return }
        let pulls = try ApplePuller(config: config, verifier: verifier, logger: logger).pull(
            store: store, runID: runID, window: .init(since: since, until: summary.window?.until),
            shouldStop: shouldStop)
        summary.appStoreAPI = pulls
        for pull in pulls {
            try store.recordSourceCounts(
                runID: runID, sourceName: pull.source, sourceKind: "app-store-api", counts: pull.counts)
            let errors = pull.errors.map { "app_store_api \(pull.source): \($0)" }
            summary.errors += errors
            // Each failed call on stderr too, where the operator's log collector reads.
            for error in pull.errors {
                logger.error("app store api call failed", metadata: ["source": "\(pull.source)", "error": "\(error)"])
            }
            summary.sources.append(
                .init(name: pull.source, kind: "app-store-api", counts: pull.counts, error: errors.first))
            if !pull.left.isEmpty {
                logger.warning(
                    "app store api: work left for the next run",
                    metadata: ["source": "\(pull.source)", "left": "\(pull.left.joined(separator: "; "))"])
            }
            if shouldStop() { summary.stopped = true }
        }
    }
}
