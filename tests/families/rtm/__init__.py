"""Tests of the rtm family (src/topiclink/families/rtm)."""
