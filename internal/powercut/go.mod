module github.com/diskio-go/diskio/internal/powercut

go 1.26.0

require (
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.49.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace github.com/diskio-go/diskio => ../..
