import CCurl
import CSQLite
import Testing

/// The system-library targets of later modules link against Debian's
/// libraries with the features ccrelay relies on.
@Suite struct SystemLibraryTests {
    @Test func libcurlHasTLSAndIsRecentEnough() throws {
        let info = try #require(ccurl_version_info())
        #expect(info.pointee.version_num >= 0x074400, "curl 7.68 or newer")
        #expect(info.pointee.features & CURL_VERSION_SSL != 0, "libcurl must be built with TLS")
        let ssl = info.pointee.ssl_version.map { String(cString: $0) } ?? ""
        #expect(ssl.hasPrefix("OpenSSL"), "the OpenSSL flavour of libcurl, got \(ssl)")
    }

    @Test func sqliteIsThreadSafeAndHasWAL() {
        #expect(sqlite3_libversion_number() >= 3_031_000)
        #expect(sqlite3_threadsafe() != 0)
        #expect(sqlite3_compileoption_used("OMIT_WAL") == 0)
    }
}
