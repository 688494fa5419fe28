import Testing

@testable import EdgeGatewayApp

@Suite("The allocator's arena limit")
struct HeapArenaLimitTests {
    @Test(
        "an arena limit the operator set through glibc's environment stands; otherwise serve sets its own",
        arguments: [
            ([:], false),
            (["PATH": "/usr/bin", "MALLOC_TRIM_THRESHOLD_": "0"], false),
            (["GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"], false),
            (["MALLOC_ARENA_MAX": "8"], true),
            (["GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0:glibc.malloc.arena_max=4"], true),
        ] as [([String: String], Bool)])
    func operatorChoice(environment: [String: String], chosen: Bool) {
        #expect(HeapArenaLimit.isChosenByOperator(environment) == chosen)
    }
}
