module github.com/dblkit/go-topgg

go 1.25.0

require (
	github.com/bwmarrin/discordgo v0.29.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/sethvargo/go-envconfig v1.4.3 // indirect
	github.com/sourcegraph/conc v0.3.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/crypto v0.0.0-20210421170649-83a5a9bb288b // indirect
	golang.org/x/sys v0.45.0 // indirect
)
