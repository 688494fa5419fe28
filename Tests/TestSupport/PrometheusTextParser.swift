import Foundation

/// Parses Prometheus text exposition with prometheus-client's parser through python3: an independent reading
/// of what a Prometheus server would scrape. The parser raises on malformed input, and then so does `parse`.
package enum PrometheusTextParser {
    package static let unavailableReason =
        "needs python3 with prometheus-client (pip install prometheus-client; scripts/dev test installs it)"

    package static let isAvailable: Bool =
        (try? runExternalToolBlocking("python3", ["-c", "import prometheus_client"]))?
        .status == 0

    /// One sample: a series' name (with a histogram's `_bucket`/`_sum`/`_count`), labels and value; `type` is
    /// the family's declared type.
    package struct Sample: Sendable, Decodable {
        package var name: String
        package var labels: [String: String]
        package var value: Double
        package var type: String
    }

    package struct ParseFailed: Error, CustomStringConvertible {
        package let description: String
    }

    private static let script = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        text = open(sys.argv[1], encoding="utf-8").read()
        samples = []
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                samples.append({"name": sample.name, "labels": sample.labels, "value": sample.value,
                                "type": family.type})
        json.dump(samples, sys.stdout)
        """

    package static func parse(_ text: String) async throws -> [Sample] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString).txt")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let outcome = try await runExternalTool("python3", ["-c", script, file.path])
        guard outcome.status == 0 else {
            throw ParseFailed(description: "prometheus-client refused the exposition: \(outcome.error)")
        }
        return try JSONDecoder().decode([Sample].self, from: Data(outcome.output.utf8))
    }
}

extension Array where Element == PrometheusTextParser.Sample {
    /// The value of the one sample named `name` whose labels include `labels`; nil when there is none.
    package func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        first { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }?.value
    }
}
