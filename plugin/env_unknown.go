package plugin

import (
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/sethvargo/go-envconfig"

	"github.com/dblkit/go-topgg/topgg"
)

// envPrefix starts the plugin's variables: one set but read by nothing is a typo.
const envPrefix = "TOPGG_"

// checkUnknown refuses a TOPGG_ variable that neither target nor [Env] reads,
// naming the closest one read. It sees the variables of the process
// environment and of a map (envconfig.MapLookuper); other lookupers list none.
func (s *strict) checkUnknown(lookuper envconfig.Lookuper) error {
	env := &strict{fields: map[string]envField{}}
	if err := env.collect(reflect.New(envType).Elem(), "Env", map[reflect.Type]bool{}); err != nil {
		return err
	}
	maps.Copy(env.fields, s.fields)
	known := slices.Sorted(maps.Keys(env.fields))
	for _, name := range listed(lookuper) {
		if strings.HasPrefix(name, envPrefix) && env.fields[name].typ == nil {
			return &topgg.ConfigError{Variable: name, Problem: "is set but read by nothing" + didYouMean(name, known) +
				"; unset it, or give a field of yours its env tag"}
		}
	}
	return nil
}

// listed returns the names the lookuper holds, sorted, when it can list them.
func listed(l envconfig.Lookuper) []string {
	var names []string
	if reflect.TypeOf(l) == reflect.TypeOf(envconfig.OsLookuper()) {
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			names = append(names, name)
		}
	} else if v := reflect.ValueOf(l); v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String {
		for _, k := range v.MapKeys() {
			names = append(names, k.String())
		}
	}
	slices.Sort(names)
	return names
}
