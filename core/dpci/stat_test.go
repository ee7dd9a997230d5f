package dpci

import "github.com/dprepro/dprepro/internal/stattest"

var zCrit2 = stattest.ZCrit(2)
