"""schedule.get: the tool (get), its merge step (merge) and every fee component (fees)."""
