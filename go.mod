module github.com/solopi-dev/solopi

go 1.26.8

require (
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/mattn/go-isatty v0.0.24
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
	github.com/urfave/cli/v2 v2.27.7
	golang.org/x/image v0.48.0
	mvdan.cc/sh/v3 v3.14.1
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/term v0.45.0 // indirect
)
