package sock

import (
	"reflect"

	"github.com/synapse-wiki/synapse/markdown"
)

var frontmatterType = reflect.TypeFor[*markdown.Frontmatter]()

// eachFrontmatter calls fn for every *markdown.Frontmatter reachable from
// v through pointers, structs, slices and arrays, in a fixed order (maps
// are not walked; no result holds frontmatter in a map).
func eachFrontmatter(v reflect.Value, fn func(fm reflect.Value)) {
	switch {
	case v.Type() == frontmatterType:
		fn(v)
	case v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface:
		if !v.IsNil() {
			eachFrontmatter(v.Elem(), fn)
		}
	case v.Kind() == reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				eachFrontmatter(v.Field(i), fn)
			}
		}
	case v.Kind() == reflect.Slice || v.Kind() == reflect.Array:
		for i := 0; i < v.Len(); i++ {
			eachFrontmatter(v.Index(i), fn)
		}
	}
}

// FrontmatterYAML is the YAML of each frontmatter in out (nil for a nil
// one), in a fixed order: what a Reply carries beside its Result.
func FrontmatterYAML(out any) []*string {
	if out == nil {
		return nil
	}
	var list []*string
	eachFrontmatter(reflect.ValueOf(out), func(fm reflect.Value) {
		f := fm.Interface().(*markdown.Frontmatter)
		if f == nil {
			list = append(list, nil)
			return
		}
		y, _ := f.YAML()
		list = append(list, &y)
	})
	return list
}

// RestoreFrontmatter puts the YAML sent alongside a result back into the
// frontmatters decoded from its JSON.
func RestoreFrontmatter(out any, list []*string) error {
	i := 0
	var err error
	eachFrontmatter(reflect.ValueOf(out), func(fm reflect.Value) {
		if i >= len(list) || err != nil {
			i++
			return
		}
		if y := list[i]; y != nil && fm.CanSet() {
			// kept, not parsed: a page's frontmatter that is not valid
			// YAML travels as its text (Err set), as in-process
			fm.Set(reflect.ValueOf(markdown.KeepFrontmatter(*y)))
		}
		i++
	})
	return err
}
