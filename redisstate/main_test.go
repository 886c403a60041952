package redisstate

import (
	"testing"

	"github.com/dblkit/go-topgg/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m, "redisstate") }
