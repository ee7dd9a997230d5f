# The predictor selection of Chaudhuri & Vinterbo (NIPS 2013), Section 5, in R:
# "we selected 52 predictors using the step procedure for a model computed by
# glm with family binomial and logit link function". adult.data is read with
# '?' kept as a factor level (read.csv keeps it: it is not an NA string), so
# all 32,561 records take part. Prints the trace that datasets'
# TestRealData_AdultStepwise compares with dprepro's data.select (BIC and AIC).
#
#   Rscript scripts/adult-step.R ../shared/datasets/adult.data.gz
#
# It takes about 6 minutes (R refits every candidate model by a dense QR).
args <- commandArgs(trailingOnly = TRUE)
path <- if (length(args) > 0) args[1] else "../shared/datasets/adult.data.gz"
d <- read.csv(gzfile(path), header = FALSE, strip.white = TRUE, stringsAsFactors = TRUE)
names(d) <- c("age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
              "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
              "hours_per_week", "native_country", "income")
d$y <- as.integer(d$income == ">50K")
d$income <- NULL
cat("R", R.version$major, ".", R.version$minor, " n =", nrow(d), "\n", sep = "")
f <- glm(y ~ ., data = d, family = binomial)
cat("full: rank", f$rank, "coefficients", length(coef(f)), "deviance", deviance(f), "\n")
cat("aliased:", names(coef(f))[is.na(coef(f))], "\n")
s <- step(f, k = log(nrow(d)), trace = 1)
cat("BIC kept:", attr(terms(s), "term.labels"), "\n")
cat("rank", s$rank, "coefficients", length(coef(s)), "deviance", deviance(s), "\n")
a <- step(f, trace = 0)
cat("AIC kept:", attr(terms(a), "term.labels"), "rank", a$rank, "deviance", deviance(a), "\n")
