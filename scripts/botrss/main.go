// Command botrss measures the example bot's peak memory (VmHWM) with many
// guilds beside its floor, a bare discordgo bot counting the same guilds
// (scripts/barebot). It builds both (or takes -bot and -floor), starts the
// fake Discord (discordtest) with -guilds guilds over -shards shards and the
// fake Top.gg (topggtest) in this process, and for each of -runs rounds runs
// the two binaries in turn (the one that goes first alternating) against
// fresh fakes: it waits until every shard is connected and the full server
// count is posted, reads VmHWM and VmRSS from /proc/<pid>/status, and stops
// the bot with SIGTERM. It prints each run, the ratio of each round, and the
// ranges. -floor none measures the bot alone. Linux only. Run from the
// module root:
//
//	go run ./scripts/botrss -guilds 100000 -shards 16 -runs 5
//
// BOTRSS_GODEBUG is passed to the bots as GODEBUG (gctrace=1 shows their heap
// at each GC).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dblkit/go-topgg/discordtest"
	"github.com/dblkit/go-topgg/topgg/topggtest"
)

func main() {
	bot := flag.String("bot", "", "path of a built example bot (default: build ./example-bot)")
	floor := flag.String("floor", "", "path of a built floor (default: build ./scripts/barebot); none: no floor")
	guilds := flag.Int("guilds", 100000, "guilds the bot is in")
	shards := flag.Int("shards", 16, "shards")
	runs := flag.Int("runs", 3, "rounds")
	timeout := flag.Duration("timeout", 5*time.Minute, "bound of one run")
	flag.Parse()
	if *guilds < 1 || *shards < 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: botrss [-bot PATH] [-floor PATH|none] [-guilds N] [-shards N] [-runs N]")
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "botrss-bin-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	bins := []string{build(*bot, "./example-bot", dir)}
	if *floor != "none" {
		bins = append(bins, build(*floor, "./scripts/barebot", dir))
	}
	ids := make([]string, 0, *guilds)
	for i := range *guilds {
		ids = append(ids, discordtest.GuildIDForShard(i / *shards, i%*shards, *shards))
	}
	hwm, rss := make([][]int, len(bins)), make([][]int, len(bins))
	var ratios []float64
	for r := range *runs {
		for k := range bins {
			i := (r + k) % len(bins) // who goes first alternates
			h, s, took, err := measure(bins[i], ids, *shards, *timeout)
			if err != nil {
				fail(fmt.Errorf("round %d, %s: %w", r+1, bins[i], err))
			}
			fmt.Printf("round %d, %s: VmHWM %.1f MiB, VmRSS %.1f MiB (online and posted after %s)\n",
				r+1, filepath.Base(bins[i]), mib(h), mib(s), took.Round(time.Millisecond))
			hwm[i], rss[i] = append(hwm[i], h), append(rss[i], s)
		}
		if len(bins) == 2 {
			ratios = append(ratios, float64(hwm[0][r])/float64(hwm[1][r]))
			fmt.Printf("round %d: VmHWM ratio bot/floor %.2fx\n", r+1, ratios[r])
		}
	}
	for i, b := range bins {
		fmt.Printf("%s, %d guilds, %d shards, %d runs: VmHWM %.1f to %.1f MiB (median %.1f), VmRSS %.1f to %.1f MiB\n",
			filepath.Base(b), *guilds, *shards, *runs, mib(slices.Min(hwm[i])), mib(slices.Max(hwm[i])), median(hwm[i]),
			mib(slices.Min(rss[i])), mib(slices.Max(rss[i])))
	}
	if len(ratios) > 0 {
		slices.Sort(ratios)
		fmt.Printf("VmHWM ratio bot/floor: %.2fx to %.2fx (median %.2fx)\n", ratios[0], ratios[len(ratios)-1], ratios[len(ratios)/2])
	}
}

// build returns path, or builds pkg into dir when path is "".
func build(path, pkg, dir string) string {
	if path != "" {
		return path
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fail(fmt.Errorf("go build %s: %w", pkg, err))
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "botrss:", err)
	os.Exit(1)
}

func mib(kib int) float64 { return float64(kib) / 1024 }

func median(kib []int) float64 {
	s := slices.Sorted(slices.Values(kib))
	return mib(s[len(s)/2])
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
	if v, ok := os.LookupEnv("BOTRSS_GODEBUG"); ok { // gctrace=1 shows the bot's heap at each GC
		cmd.Env = append(cmd.Env, "GODEBUG="+v)
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
	hwm, rss, file, err := status(cmd.Process.Pid)
	if err == nil {
		fmt.Printf("  (%s: RssFile %.1f MiB: mostly the binary's pages)\n", filepath.Base(bot), mib(file))
	}
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

// status reads VmHWM, VmRSS and RssFile (KiB) of a process.
func status(pid int) (hwm, rss, file int, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, err
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
		case "RssFile":
			file = n
		}
	}
	if hwm == 0 {
		return 0, 0, 0, errors.New("no VmHWM in /proc status")
	}
	return hwm, rss, file, sc.Err()
}
