module github.com/dblkit/go-topgg

go 1.25.0

require (
	github.com/bwmarrin/discordgo v0.29.0
	github.com/gorilla/websocket v1.5.3
	github.com/sethvargo/go-envconfig v1.4.3
	github.com/sourcegraph/conc v0.3.0
	github.com/stretchr/testify v1.12.1
	go.etcd.io/bbolt v1.5.0
	go.uber.org/goleak v1.3.0
)

require (
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.9.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.0.0-20210421170649-83a5a9bb288b // indirect
	golang.org/x/sys v0.45.0 // indirect
)
