package enum EdgeGatewayVersion {
    package static let current = "0.1.0"
}
