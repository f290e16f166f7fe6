import Testing
@testable import ParleyCore

@Suite struct ProviderErrorTests {
    @Test func retryableCategories() {
        let retryable = ProviderError.Category.allCases.filter {
            ProviderError($0, provider: "test", message: "x").isRetryable
        }
        #expect(Set(retryable) == [.rateLimited, .connectivity, .timeout, .server])
    }
}
