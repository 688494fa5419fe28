public enum EdgeGatewayVersion {
    public static let current = "0.1.0"
}
