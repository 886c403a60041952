package pgstore

import "time"

// SetFollowCheck sets how often s's Follow checks for lost notifications.
func SetFollowCheck(s *Store, d time.Duration) { s.followCheck = d }

// LoseNotifications makes s notify a channel no Follow listens to, as if
// every notification of its Ingests were lost.
func LoseNotifications(s *Store) { s.channel += "_lost" }
