// Package raftwal runs hashicorp/raft-wal's segment files on diskio.
package raftwal
