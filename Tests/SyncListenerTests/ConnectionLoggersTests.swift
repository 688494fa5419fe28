import BLIPConnection
import Logging
import Testing

@testable import SyncListener

@Suite("Connection loggers: one per database and subprotocol, tagged once")
struct ConnectionLoggersTests {
    @Test("a connection's logger carries the listener's, the database's and the subprotocol's metadata")
    func taggedOnce() {
        var base = Logger(label: "test")
        base[metadataKey: "listener"] = "lan"
        let loggers = ConnectionLoggers(base: base)
        let logger = loggers.logger(database: "inventory", subprotocol: "BLIP_3+CBMobile_4")
        #expect(logger[metadataKey: "listener"] == "lan")
        #expect(logger[metadataKey: "db"] == "inventory")
        #expect(logger[metadataKey: "blip.subprotocol"] == "BLIP_3+CBMobile_4")
        let other = loggers.logger(database: "inventory", subprotocol: "BLIP_3+CBMobile_3")
        #expect(other[metadataKey: "blip.subprotocol"] == "BLIP_3+CBMobile_3")
        #expect(loggers.logger(database: "prices", subprotocol: "BLIP_3+CBMobile_3")[metadataKey: "db"] == "prices")
    }

    @Test("tagging a logger that has the subprotocol already changes nothing, and another subprotocol replaces it")
    func taggingIsIdempotent() {
        let tagged = BLIPConnection.logger(Logger(label: "test"), taggedWith: "BLIP_3+CBMobile_3")
        #expect(
            BLIPConnection.logger(tagged, taggedWith: "BLIP_3+CBMobile_3")[metadataKey: "blip.subprotocol"]
                == "BLIP_3+CBMobile_3")
        #expect(
            BLIPConnection.logger(tagged, taggedWith: "BLIP_3+CBMobile_4")[metadataKey: "blip.subprotocol"]
                == "BLIP_3+CBMobile_4")
    }
}
