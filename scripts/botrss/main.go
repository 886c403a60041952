// Command botrss measures the example bot's peak memory (VmHWM) with many
// guilds: it starts the fake Discord (discordtest) with -guilds guilds over
// -shards shards and the fake Top.gg (topggtest) in this process, runs the
// BUILT example bot binary against them, waits until every shard is
// connected and the bot has posted the full server count, reads VmHWM and
// VmRSS from /proc/<pid>/status, and stops the bot with SIGTERM. It repeats
// -runs times and prints each run and the range. Linux only.
//
//	go build -o /tmp/example-bot ./example-bot
//	go run ./scripts/botrss -bot /tmp/example-bot -guilds 100000 -shards 16 -runs 3
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

func main() {
	bot := flag.String("bot", "", "path of the built example bot")
	guilds := flag.Int("guilds", 100000, "guilds the bot is in")
	shards := flag.Int("shards", 16, "shards")
	runs := flag.Int("runs", 3, "runs")
	timeout := flag.Duration("timeout", 5*time.Minute, "bound of one run")
	flag.Parse()
	if *bot == "" || *guilds < 1 || *shards < 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: botrss -bot PATH [-guilds N] [-shards N] [-runs N]")
		os.Exit(2)
	}
	ids := make([]string, 0, *guilds)
	for i := range *guilds {
		ids = append(ids, discordtest.GuildIDForShard(i / *shards, i%*shards, *shards))
	}
	var hwm, rss []int
	for r := range *runs {
		h, s, took, err := measure(*bot, ids, *shards, *timeout)
		if err != nil {
			fmt.Fprintf(os.Stderr, "run %d: %v\n", r+1, err)
			os.Exit(1)
		}
		fmt.Printf("run %d: VmHWM %d MiB, VmRSS %d MiB (online and posted after %s)\n", r+1, h>>10, s>>10, took.Round(time.Millisecond))
		hwm, rss = append(hwm, h), append(rss, s)
	}
	fmt.Printf("%d guilds, %d shards, %d runs: VmHWM %d to %d MiB, VmRSS %d to %d MiB\n",
		*guilds, *shards, *runs, minOf(hwm)>>10, maxOf(hwm)>>10, minOf(rss)>>10, maxOf(rss)>>10)
}

// measure runs the bot once and returns its VmHWM and VmRSS in KiB.
func measure(bot string, ids []string, shards int, timeout time.Duration) (hwm, rss int, took time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dc, err := discordtest.NewServer(discordtest.WithShardCount(shards), discordtest.WithGuilds(ids...))
	if err != nil {
		return 0, 0, 0, err
	}
	defer dc.Close()
	project := topggtest.DiscordBot()
	project.PlatformID = dc.BotUserID()
	tg, err := topggtest.NewServer(topggtest.WithProject(project))
	if err != nil {
		return 0, 0, 0, err
	}
	defer tg.Close()
	state, err := os.MkdirTemp("", "botrss-")
	if err != nil {
		return 0, 0, 0, err
	}
	defer os.RemoveAll(state)

	cmd := exec.Command(bot)
	cmd.Env = []string{
		"DISCORD_TOKEN=" + dc.Token(), "TOPGG_TOKEN=" + tg.Token(),
		"DISCORD_API_URL=" + dc.APIBase(), "TOPGG_API_URL=" + tg.URL,
		"SHARD_COUNT=" + strconv.Itoa(shards), "TOPGG_STATE_DIR=" + state, "LOG_LEVEL=warn",
	}
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	if err := dc.WaitConnected(ctx, shards); err != nil {
		return 0, 0, 0, err
	}
	for posted(tg) != len(ids) {
		select {
		case <-ctx.Done():
			return 0, 0, 0, fmt.Errorf("server count %d never posted (last %d)", len(ids), posted(tg))
		case err := <-exited:
			return 0, 0, 0, fmt.Errorf("the bot exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	took = time.Since(start)
	hwm, rss, err = status(cmd.Process.Pid)
	return hwm, rss, took, err
}

// posted returns the last server count posted, -1 if none.
func posted(tg *topggtest.Server) int {
	m := tg.Metrics()
	if len(m) == 0 {
		return -1
	}
	return m[len(m)-1].Metrics["server_count"]
}

// status reads VmHWM and VmRSS (KiB) of a process.
func status(pid int) (hwm, rss int, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		switch k {
		case "VmHWM":
			hwm = n
		case "VmRSS":
			rss = n
		}
	}
	if hwm == 0 {
		return 0, 0, errors.New("no VmHWM in /proc status")
	}
	return hwm, rss, sc.Err()
}

func minOf(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
