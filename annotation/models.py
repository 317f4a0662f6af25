# Human calibration studies arrive with issue 5.
