package analyzer

// DiskioItself is diskioItself, for the external tests.
var DiskioItself = diskioItself
