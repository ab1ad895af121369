package schedconfig

import (
	"regexp"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

var (
	syntaxLine = regexp.MustCompile(`line (\d+)`)
	// fieldPath matches a field path as the decoder and validation name
	// one: profiles[0].plugins.score.enabled[1].weight.
	fieldPath = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*(\[\d+\])*(\.[A-Za-z][A-Za-z0-9]*(\[\d+\])*)*`)
	pathPart  = regexp.MustCompile(`([A-Za-z][A-Za-z0-9]*)|\[(\d+)\]`)
)

// Line says where in data (1-based) the problem err describes is: the line
// a YAML syntax error names, or the line of the deepest field of the first
// field path in err's message that data holds. 0 when it cannot tell.
func Line(data []byte, err error) int {
	if err == nil {
		return 0
	}
	msg := err.Error()
	if m := syntaxLine.FindStringSubmatch(msg); m != nil && strings.Contains(msg, "yaml") {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	var doc yamlv3.Node
	if yamlv3.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	for _, path := range fieldPath.FindAllString(msg, -1) {
		named := strings.Contains(msg, path+":") || strings.Contains(msg, `unknown field "`+path+`"`)
		if !strings.ContainsAny(path, ".[") && !named {
			continue // a plain word, not a top-level field named as one
		}
		if line := lineOf(doc.Content[0], path); line > 0 {
			return line
		}
	}
	// Errors about a plugin name it rather than its path.
	if m := pluginName.FindStringSubmatch(msg); m != nil {
		return scalarLine(doc.Content[0], m[1])
	}
	return 0
}

// pluginName finds the plugin our checks and the framework's name:
// `plugin NodeResourcesFit: ...`, `ScorePlugin "NoSuch" does not exist`.
var pluginName = regexp.MustCompile(`(?i)plugin "?([A-Za-z][A-Za-z0-9]*)`)

// scalarLine is the line of the first scalar whose value is v, 0 if none.
func scalarLine(node *yamlv3.Node, v string) int {
	if node.Kind == yamlv3.ScalarNode && node.Value == v {
		return node.Line
	}
	for _, c := range node.Content {
		if line := scalarLine(c, v); line > 0 {
			return line
		}
	}
	return 0
}

// lineOf follows path through the document as far as it goes, and gives
// the line of the last node it reached past the root; 0 if it reached none.
func lineOf(root *yamlv3.Node, path string) int {
	node, line := root, 0
	for _, m := range pathPart.FindAllStringSubmatch(path, -1) {
		next := child(node, m[1], m[2])
		if next == nil {
			break
		}
		node, line = next, next.Line
	}
	return line
}

func child(node *yamlv3.Node, key, index string) *yamlv3.Node {
	switch {
	case key != "" && node.Kind == yamlv3.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == key {
				// The key's line: a value may start lines further down.
				v := *node.Content[i+1]
				v.Line = node.Content[i].Line
				return &v
			}
		}
	case index != "" && node.Kind == yamlv3.SequenceNode:
		i, _ := strconv.Atoi(index)
		if i < len(node.Content) {
			return node.Content[i]
		}
	}
	return nil
}
