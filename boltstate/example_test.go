package boltstate_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/dblkit/go-topgg/boltstate"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "boltstate-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	state, err := boltstate.Open(dir) // the votes, the command hash and the opt-ins
	if err != nil {
		panic(err)
	}
	defer state.Close()

	// A second process on the same directory is refused.
	_, err = boltstate.Open(dir)
	fmt.Println(errors.Is(err, boltstate.ErrLocked))
	// Output: true
}
