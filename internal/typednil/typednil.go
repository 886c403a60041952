// Package typednil answers one question the module asks wherever a caller
// hands it an implementation: is this value nil, including a nil pointer (or
// map, slice, func, chan) inside a non-nil interface? Such a typed nil passes
// a v == nil check and panics later, often in a goroutine, far from the
// mistake; constructors refuse it up front instead.
package typednil

import "reflect"

// Is reports whether v is nil, or an interface holding a nil pointer, map,
// slice, func, channel, interface or unsafe pointer.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return r.IsNil()
	}
	return false
}
