package source

// Default bounds on what a Cache writes and keeps on disk.
const (
	// DefaultMaxFileBytes is GitHub's limit on one file: larger ones need LFS.
	DefaultMaxFileBytes           = 100 << 20
	DefaultMaxCheckoutBytes       = 1 << 30
	DefaultMaxCachedCheckouts     = 100
	DefaultMaxCachedCheckoutBytes = 2 << 30
)

func (o Options) maxFileBytes() int64 {
	if o.MaxFileBytes > 0 {
		return o.MaxFileBytes
	}
	return DefaultMaxFileBytes
}

func (o Options) maxCheckoutBytes() int64 {
	if o.MaxCheckoutBytes > 0 {
		return o.MaxCheckoutBytes
	}
	return DefaultMaxCheckoutBytes
}
