package manifest

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
)

// quantityMaps are the fields whose values are resource quantities: a
// container's requests and limits, a node's capacity and allocatable, a
// pod's overhead, a claim's storage request.
var quantityMaps = map[string]bool{"requests": true, "limits": true, "capacity": true, "allocatable": true, "overhead": true}

// badQuantities finds the quantities of a manifest that do not parse, as
// "spec.containers[0].resources.requests.cpu "1x" (line 11)": the decoder
// says only that some quantity does not match a regular expression.
func badQuantities(data []byte) []string {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	var out []string
	var walk func(n *yaml.Node, path string, quantities bool)
	walk = func(n *yaml.Node, path string, quantities bool) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				key, value := n.Content[i].Value, n.Content[i+1]
				sub := key
				if path != "" {
					sub = path + "." + key
				}
				if quantities && value.Kind == yaml.ScalarNode {
					if _, err := resource.ParseQuantity(value.Value); err != nil {
						out = append(out, fmt.Sprintf("%s %q (line %d)", sub, value.Value, value.Line))
					}
					continue
				}
				walk(value, sub, quantityMaps[key])
			}
		case yaml.SequenceNode:
			for i, item := range n.Content {
				walk(item, fmt.Sprintf("%s[%d]", path, i), false)
			}
		}
	}
	walk(doc.Content[0], "", false)
	return out
}

// quantityError says which quantities are malformed and what one looks
// like, in place of the decoder's regular expression.
func quantityError(kind string, data []byte) *Error {
	bad := badQuantities(data)
	if len(bad) == 0 {
		return errorf("malformed %s manifest: a quantity is not one: write a number with an optional suffix, as 100m, 1.5, 2Gi or 500M", kind)
	}
	return errorf("malformed %s manifest: not a quantity: %s; write a number with an optional suffix, as 100m, 1.5, 2Gi or 500M", kind, strings.Join(bad, ", "))
}
