package chat

// EndpointCacheFile is the endpoint cache file's path, for the external
// tests that corrupt or block it.
var EndpointCacheFile = endpointCacheFile
